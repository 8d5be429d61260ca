/**
 * Leibniz Pi over actors: the {@code PiActors} program and POST /pi ({@code PiRunner} -> creator
 * -> worker pool -> collector).
 */
package burstbench.bridge.pi;
