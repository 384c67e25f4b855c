# equinox's vendored tests are a client suite run by tools/clients.py in its own environment
# (equinox, beartype, optax installed), not a part of this repository's test run.
collect_ignore = ["equinox"]
