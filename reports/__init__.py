"""The migration report: Markdown and a self-contained HTML page with pictures drawn as SVG.

- ``plan_types``: plan.json as types; ``read_plan`` reads the document from its text.
- ``model``: ``build_model`` turns a scan, that plan document, the graph and optional
  translations into the view model (``view``), pure data with every figure formatted (``fmt``).
- ``svg``: the pictures (workload mix, graph, phases), drawn by ``svg_mix``, ``svg_graph`` and
  ``svg_timeline`` on the small writer in ``svg_canvas``.
- ``render``: ``render_report(model)`` fills the jinja2 templates under ``templates/``.
"""
