/**
 * Minimal same-library loops for {@code ./bench perf clients}: {@code Send} and {@code Recv} move
 * messages through the same actors, JMS sessions and options as the contract clients, and keep
 * no records (the harness's own work is what the contract clients do beyond them).
 */
package burstbench.bridge.loops;
