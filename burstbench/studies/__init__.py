"""The studies beside the burst measurements: Pi (workers over the broker, and actors) and
request/reply."""
