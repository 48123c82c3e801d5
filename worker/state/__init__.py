"""Local state: changelogged key-value stores.

- ``checkpoint``: the changelog position kept with the data, checksummed;
- ``engine``: one store on disk (RocksDB), data and checkpoint in one atomic batch;
- ``store``: a task's store: transaction buffer, changelog records, commit;
- ``restore``: batched read_committed restoration from changelogs (standbys,
  learners and actives catching up);
- ``layout``: where stores live in the state directory, and what is there.
"""
