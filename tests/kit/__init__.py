"""The test kit: what many tests need, written once (docs/testing.md, "The kit").

- :mod:`kit.apps` -- the app as tests run it (no animation), connected to a server, through a
  fault proxy, from settings, or offline from captured turns (:mod:`kit.offline`).
- :mod:`kit.pilot` -- driving the app under Textual's ``Pilot``: ``settle``, ``wait_until``,
  ``send``, and what the app and the server show.
- :mod:`kit.fakes` -- fault injection at the wire (transports that hold chosen requests).
- :mod:`kit.servers` -- the embedded server as a fixture, settings for a test, a ``Chat`` on a server.
- :mod:`kit.zygote` -- ``rewindtui serve`` processes forked from one helper process that has
  imported google-adk once (``zygote.spawn``: what ``subprocess.Popen`` gives); ``zygote.run_script``
  runs a benchmark script there.
- :mod:`kit.collector` -- the cyclic garbage collector of a pytest process kept off what each
  module leaves alive (a plugin, ``tests/conftest.py``).

Nothing here starts a server at import time: offline tests import the kit without google-adk's
server being started (the embedded server is imported only when a fixture starts one).
"""
