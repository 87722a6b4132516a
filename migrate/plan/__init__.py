"""The plan stage: what moves, in which order, and how both schedulers run meanwhile.

Takes: IR jobs, the graph, the site configuration, inventories and accounted demand.
:mod:`.facts` reads what classification needs from each job, :mod:`.classify` and
:mod:`.rules` place it against the decision tables, :mod:`.changes` says what has to
change for it to move (each change with its kind), :mod:`.units` groups jobs that
move together and scores their risk, :mod:`.demand` weighs them, :mod:`.phases` lays
out Phase 0, the pilot, the waves and the end state, and :mod:`.planner` puts it
together.
Gives: the plan and ``plan.json`` (documented in ``docs/plan-json.md``).
"""
