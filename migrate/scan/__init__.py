"""The scan stage: files in, IR jobs and coded diagnostics out.

Takes: paths. :mod:`.discover` walks them (never following links out of the tree),
:mod:`.files` reads one file with its format's reader, :mod:`.scanner` runs the whole
walk through the content-hash cache (:mod:`.cache`) and a pool of workers (:mod:`.pool`),
and :mod:`.jsonstream` streams each file's result as JSON.
Gives: ``FileResult`` per reported file and the summary (:mod:`.results`).
Imports the core, the site configuration and the readers in ``migrate.translators``.
"""
