/**
 * POST /bursts: {@code Bursts} spawns one {@code BurstRun} (the creator) per request, into a
 * worker pool or through a broker queue, to a collector.
 */
package burstbench.bridge.bursts;
