"""Shell bodies: what a script does, read with bashlex, statement by statement."""
