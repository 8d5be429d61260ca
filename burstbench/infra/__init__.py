"""What a point runs on: brokers, databases, network namespaces, TLS material, child processes,
topologies, and hosts beyond this machine (launchers, inventory, provisioning)."""
