"""Generators of the tables the EVT code ships (ad_table.py, lr_table.py):
slow Monte Carlo runs, kept apart from the estimator and never imported by it."""
