"""The graph stage: what ties the jobs together.

Takes: IR jobs and the site configuration. :mod:`.builder` makes one networkx
MultiDiGraph of jobs, storage (:mod:`.storage`), data flows (:mod:`.flow`),
dependencies (:mod:`.deps`), monitoring, images, modules and queues; :mod:`.analysis`
finds cycles, migration units, shared file systems and run order (:mod:`.order`);
:mod:`.export` writes GraphML and node-link JSON.
Gives: the graph and its analyses (node and edge names in :mod:`.model`).
"""
