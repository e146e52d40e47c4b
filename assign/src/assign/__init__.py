"""assign: find near-optimal task assignments with random sampling and
Extreme Value Theory (Radojkovic et al., ASPLOS 2012)."""

__version__ = "0.1.0"
