"""pipeplace's management command: what parsecmgmt is to PARSEC."""
__version__ = "0.1.0"
