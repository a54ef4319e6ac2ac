"""The Python API's internals; the public names are in ``artemis_cli.api``."""
