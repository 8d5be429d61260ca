/**
 * Used by every area: OpenWire connections ({@code Jms}), the contract message body and CRC-32
 * ({@code Body}), the epoch clock, stdout JSON lines, command-line and signal helpers.
 */
package burstbench.bridge.shared;
