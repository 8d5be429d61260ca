/**
 * The contract clients (clients/contract.md) on actors: {@code ContractProducer}, {@code
 * ContractConsumer} and their option parser {@code ContractArgs}.
 */
package burstbench.bridge.contract;
