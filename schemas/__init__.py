"""Spark schemas of the fleet job's input and output tables."""
