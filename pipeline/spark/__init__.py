"""segue.pipeline.spark: ``segue simulate`` on Spark, the one place that imports pyspark.

The work itself is pure and lives outside (:func:`segue.pipeline.evaluate.evaluate_unit`);
this package only moves rows: it reads scenario rows from files or Kafka
(:mod:`.sources`), spreads them over executors and maps the pure function over them
(:mod:`.job`), aggregates with Spark SQL (:mod:`.summary`) and shows progress
(:mod:`.progress`). An import-linter contract keeps pyspark out of the rest of Segue:
the image runs without it. docs/pipeline.md, "Spark".
"""
