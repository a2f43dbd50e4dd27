"""The playground: a local page to edit, check, run, predict and compile programs (``crasp serve``).

One run of a request, in order: :mod:`.app` (Starlette: the page, its assets, the JSON API, the
body-size limit) -> :mod:`.worker` (a fresh process per job, killed when its time is up) ->
:mod:`.jobs` (check, run, predict, compile: plain data in, plain data out) -> :mod:`.heatmaps`
(a compiled model's attention as pictures or tables). :mod:`.server` runs uvicorn, :mod:`.cli`
adds ``crasp serve``. Nothing here imports Starlette or uvicorn on import of the package, and
nothing runs a user's Python.
"""
