/**
 * POST /messages: {@code Ingest}, a pool of ingest workers, a per-batch collector and a JMS relay
 * per broker url.
 */
package burstbench.bridge.ingest;
