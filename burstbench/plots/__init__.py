"""Result files in, charts and report out: reads result files only, imports nothing that runs a
broker."""
