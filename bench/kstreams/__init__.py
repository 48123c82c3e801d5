"""Side by side with Kafka Streams: seed 003's WordCount scaled 2->3 and 3->6 under Kafka
Streams (Java, ``java/``) and under Segue on one local stack (``run.py``)."""
