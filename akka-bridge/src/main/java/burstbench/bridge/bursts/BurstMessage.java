package burstbench.bridge.bursts;

/** One message of a burst as the creator emits it (body per the client contract). */
record BurstMessage(String producer, long seq, int burst, long emitNs, byte[] body, boolean last) {}
