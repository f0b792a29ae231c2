# Two builds of the same input give byte-identical trees, whatever the folder, time zone, locale or hash seed.
mkdir first second
(cd first && toolgen init && toolgen build --quiet)
cp -r first/schemas first/toolgen.yaml second/
TZ=Pacific/Kiritimati LC_ALL=C.UTF-8 PYTHONHASHSEED=12345 toolgen -C second build --quiet
diff -r first/generated second/generated && echo "identical"
head -n 1 second/generated/toolgen_sdk/models.py            # one fixed header: no time, version or path
