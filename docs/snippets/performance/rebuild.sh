# What you wait on day to day: a rebuild and a check with nothing changed answer from the manifest.
toolgen init
toolgen build --quiet                                     # the first build renders, checks and writes
toolgen build 2> rebuild.txt                              # nothing changed: nothing rendered
cat rebuild.txt
grep -q "toolgen: generated/toolgen_sdk/ is up to date (" rebuild.txt
toolgen check                                             # up to date, from the manifest's hashes
ls .toolgen-cache/formatted.json                          # ruff formats only files it has not formatted before
