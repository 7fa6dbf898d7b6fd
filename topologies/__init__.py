"""Topology files: the shipped JSON networks, their loader/validator, and building a runnable network."""
