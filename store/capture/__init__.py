"""Capture: following the agents' session files as they are written (domain).

Which folders each agent writes (:mod:`~store.capture.agents`), what changed in a file since
the store last read it and reading only that (:mod:`~store.capture.files`,
:mod:`~store.capture.reading`), and the user service and hook that keep a capture running
(:mod:`~store.capture.service`). The store keeps each file's :class:`~store.capture.files.FileState`
(``store/db/writing/sources.py``); the loop that follows the folders is ``transcript-store watch``.
"""
