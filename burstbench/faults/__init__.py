"""Faults during a persistent, client-acknowledged burst, and what they cost: ``./bench chaos``.

Every scenario runs producers and competing consumers of one client (``--client``) against
KahaDB with synchronous journal writes, persistent messages and ``--ack client``, injects one
fault mid-run, waits until everything that can arrive has arrived, and reports sent, received,
lost, duplicated and redelivered messages and how long recovery took.

- ``registry``: every scenario, name -> class (one module each: ``broker_kill``, ``link_cut``,
  ``failover_pair``, ``consumer_kill``, ``slow_consumer``, ``store_full``,
  ``mesh_partition``; the module's docstring says what its fault does);
- ``base``: ``Scenario``, the life cycle they share (processes, events, drain, stop,
  accounting), which ``burstbench.faults.soak`` builds on too;
- ``spec``: ``ChaosSpec``, ``Skip``, ``ChaosFailed``; ``lives``: the processes (``Life``,
  ``DutyCycle``); ``reckon``: the accounting rule and the ``Result`` row;
- ``report``: the reliability table, the readable summary, ``chaos.json`` and ``chaos.md``;
- ``command``: ``./bench chaos SCENARIO|all``.
"""
