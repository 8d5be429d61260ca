/**
 * What the server and the actor areas share: request/response records and their validation ({@code
 * Api}), configuration ({@code Settings}), the strict JSON mapper, the counters actor ({@code
 * Stats}).
 */
package burstbench.bridge.api;
