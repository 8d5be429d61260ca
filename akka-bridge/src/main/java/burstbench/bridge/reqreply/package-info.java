/**
 * Blocking request/reply over a temporary queue, a reused reply queue or an actor ask: the {@code
 * ReqReply} program.
 */
package burstbench.bridge.reqreply;
