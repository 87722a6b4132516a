"""What the site tells beyond its job files.

Takes: ``migrate.yaml`` (:mod:`.config`), node inventories (:mod:`.inventory` over a
``slurm.conf`` or an AWS ParallelCluster config) and accounting dumps of what ran
(:mod:`.usage` over ``sacct --parsable2`` or ``kubectl get jobs -o json``).
Gives: a ``SiteConfig``, an ``Inventory`` per partition, and accounted demand per job
(:mod:`.usage_match`). Imports only the core.
"""
