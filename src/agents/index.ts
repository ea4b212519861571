/** The agent driver contract. Implementations: adapters/agents (`pulse/agents`). */
export * from "./contract.js";
