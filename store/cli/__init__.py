"""The command line (edge layer): thin, calling only the public API in ``store``.

One module per command group; :mod:`store.cli.main` builds the root group from them.
"""
