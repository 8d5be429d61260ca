/**
 * The HTTP server: {@code App} (ActorSystem, binding from config, CoordinatedShutdown) and {@code
 * Routes} (HTTP only; asks the areas' actors).
 */
package burstbench.bridge.http;
