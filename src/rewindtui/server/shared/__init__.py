"""What every layer of the server shares: names and paths, wire shapes, errors, the fenced private names.

The bottom of the server's layers (``process`` → ``http`` → ``service`` → ``storage`` | ``agent`` →
``shared``, the import contract in ``pyproject.toml``): it imports none of the others.
"""
