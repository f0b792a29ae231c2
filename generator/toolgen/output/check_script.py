"""The staged check's script: what the fresh interpreter runs to import the staged package and run each tool's
validators (toolgen.output.sdk_check starts it and reads its one report line)."""

# Text, not code of this package: the interpreter that runs it imports nothing of toolgen.
CHECK_SCRIPT = """\
import importlib, json, linecache, os, sys, traceback

# What the staged package imports from outside itself, imported while the build still renders it.
for preloaded in ("asyncio", "concurrent.futures", "decimal", "logging", "subprocess", "uuid", "pydantic"):
    try:
        importlib.import_module(preloaded)
    except ImportError:
        pass
try:
    from pydantic import BaseModel, ConfigDict, Field, RootModel, TypeAdapter, ValidationError
except ImportError:
    pass
line = sys.stdin.readline()
if not line:
    raise SystemExit(0)
job = json.loads(line)
folder, package, shard, shards, cache = job["folder"], job["package"], job["shard"], job["shards"], job["cache"]
# With `sent`, the package's files come on the next line, as the build stages them: imported from here, not disk.
sources = None
if job.get("sent"):
    sent = json.loads(sys.stdin.readline())
    sources = {os.path.join(folder, package, *name.split("/")): text.encode("utf-8") for name, text in sent.items()}
    del sent
used = []
if cache or sources is not None:
    import _imp, hashlib, importlib.machinery, importlib.util, marshal, types

    salt = importlib.util.MAGIC_NUMBER + bytes([sys.flags.optimize])

    class CachedLoader(importlib.machinery.SourceFileLoader):
        # A module's code object from the cache when this Python compiled the same source bytes before.
        def get_data(self, path):
            if sources is not None and path in sources:
                return sources[path]
            return super().get_data(path)

        def get_code(self, fullname):
            path = self.get_filename(fullname)
            source = self.get_data(path)
            if not cache:
                return self.source_to_code(source, path)
            key = hashlib.blake2b(salt + source, digest_size=20).hexdigest()
            used.append(key)
            entry = os.path.join(cache, key)
            try:
                with open(entry, "rb") as handle:
                    code = marshal.loads(handle.read())
                if isinstance(code, types.CodeType):
                    _imp._fix_co_filename(code, path)
                    return code
            except (OSError, ValueError, EOFError, TypeError):
                pass
            code = self.source_to_code(source, path)
            try:  # missing, or unreadable: written anew
                os.makedirs(cache, exist_ok=True)
                partial = f"{entry}.{os.getpid()}.partial"
                with open(partial, "wb") as handle:
                    handle.write(marshal.dumps(code))
                os.replace(partial, entry)
            except OSError:
                pass
            return code

    def staged_finder(entry):
        if entry == folder or entry.startswith(folder + os.sep):
            return importlib.machinery.FileFinder(entry, (CachedLoader, importlib.machinery.SOURCE_SUFFIXES))
        raise ImportError(entry)

    class SentFinder:
        # The package's modules from the files sent: the staged tree on disk may still be being written.
        @staticmethod
        def find_spec(fullname, path=None, target=None):
            if fullname != package and not fullname.startswith(package + "."):
                return None
            base = os.path.join(folder, *fullname.split("."))
            for filename, search in ((os.path.join(base, "__init__.py"), [base]), (base + ".py", None)):
                if filename in sources:
                    loader = CachedLoader(fullname, filename)
                    return importlib.util.spec_from_file_location(
                        fullname, filename, loader=loader, submodule_search_locations=search
                    )
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)

    if sources is not None:
        sys.meta_path.insert(0, SentFinder)
    else:
        sys.path_hooks.insert(0, staged_finder)
        sys.path_importer_cache.clear()
if sources is None:
    sys.path.insert(0, folder)
sys.setrecursionlimit(int(sys.argv[1]))
MARKER = "toolgen-sdk-check: "


def described(error):
    if sources is not None:  # the line quoted below comes from what was sent, not a file still being written
        for frame, _ in traceback.walk_tb(error.__traceback__):
            name = frame.f_code.co_filename
            if name in sources and name not in linecache.cache:
                text = sources[name].decode("utf-8", "replace")
                linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(folder)]
    text = f"{type(error).__name__}: {error}"[:500]
    if frames:
        place = frames[-1]
        name = place.filename[len(folder):].lstrip("/\\\\").replace("\\\\", "/")
        text += f" (at {name}:{place.lineno}: {(place.line or '').strip()[:120]})"
    return text


def report(**fields):
    print(MARKER + json.dumps(fields), flush=True)


def python_modules(path):
    path = os.path.normpath(path)
    if sources is not None:
        names = [name[len(path) + 1 :] for name in sources if name.startswith(path + os.sep)]
        names = [name for name in names if os.sep not in name]
    elif os.path.isdir(path):
        names = os.listdir(path)
    else:
        return []
    return sorted(name[:-3] for name in names if name.endswith(".py") and name != "__init__.py")


def tool_parts(definitions):
    # Each tool's part key: what checks it (script, toolgen, Python), every file but tools.py and the tools' own
    # model modules, tools.py without its definitions, the tool's definition and its own model modules (holding
    # its models, imported by no other module): toolgen.output.checked_packages. A tool without own modules found
    # has no key, and is always checked.
    import re

    models_dir = os.path.join(folder, package, "_tool_models")
    texts = {
        os.path.basename(path)[:-3]: data
        for path, data in sources.items()
        if os.path.dirname(path) == models_dir and path.endswith(".py") and not path.endswith("__init__.py")
    }
    homes, referenced = {}, set()
    for module, data in texts.items():
        for name in re.findall(rb"^(?:class (\\w+)\\(|(\\w+)(?: *: *\\w+)? *=)", data, re.M):
            homes.setdefault(b"".join(name).decode("ascii"), set()).add(module)
        referenced.update(name.decode("ascii") for name in re.findall(rb"_tool_models\\.(\\w+)", data))
    owned, claims = {}, {}
    for tool, definition in definitions.items():
        if not isinstance(definition, dict):
            continue
        named = [definition.get(field) for field in ("args_model", "result_model")]
        found = [homes.get(name) if isinstance(name, str) else None for name in named if name is not None]
        if found and all(home is not None and len(home) == 1 for home in found):
            owned[tool] = {module for home in found for module in home}
            for module in owned[tool]:
                claims[module] = claims.get(module, 0) + 1
    owned = {
        tool: modules
        for tool, modules in owned.items()
        if all(claims[module] == 1 and module not in referenced for module in modules)
    }
    own_paths = {os.path.join(models_dir, f"{module}.py") for modules in owned.values() for module in modules}
    tools_path = os.path.join(folder, package, "tools.py")
    # models.py's lines that name a tool's own modules or models (its lazy table, __all__, the imports for type
    # checkers) go to that tool's key: a tool whose models changed names changes only them.
    models_path = os.path.join(folder, package, "models.py")
    models_frame, models_lines = table_lines(sources.get(models_path, b""), owned, homes)
    base = hashlib.blake2b(json.dumps([job["salt"], sys.version, sys.executable, package]).encode(), digest_size=16)
    for path in sorted(sources):
        if path != tools_path and path not in own_paths:
            data = models_frame if path == models_path else sources[path]
            base.update(f"\\0{os.path.relpath(path, folder)}\\0{len(data)}\\0".encode("utf-8", "surrogatepass"))
            base.update(data)
    # tools.py but its definitions (each in its own tool's key): the code around them makes every tool's spec.
    text = sources.get(tools_path, b"")
    call = text.find(b"= DeferredTools(\\n")
    start = text.find(b"\\n    {\\n", call) if call >= 0 else -1
    end = text.find(b"\\n    },\\n)\\n", start) if start >= 0 else -1
    frame = text if end < 0 else text[:start] + text[end:]
    base.update(f"\\0tools.py around the definitions\\0{len(frame)}\\0".encode())
    base.update(frame)
    keys = {}
    for tool, modules in owned.items():
        key = base.copy()
        key.update(json.dumps([tool, definitions[tool]], sort_keys=True, default=repr).encode("utf-8", "surrogatepass"))
        for module in sorted(modules):
            key.update(f"\\0{module}\\0{len(texts[module])}\\0".encode("utf-8", "surrogatepass"))
            key.update(texts[module])
        own_lines = b"".join(models_lines.get(tool, []))
        key.update(f"\\0models.py lines\\0{len(own_lines)}\\0".encode())
        key.update(own_lines)
        keys[tool] = key.hexdigest()
    return keys, owned


def table_lines(text, owned, homes):
    # models.py without the lines that name one tool's own modules or models, and those lines by tool: an import
    # for type checkers (a wrapped one through its closing line), a line of the lazy table, a name of __all__.
    import re

    tool_of_module = {module: tool for tool, modules in owned.items() for module in modules}
    tool_of_name = {}
    for name, modules in homes.items():
        if len(modules) == 1 and next(iter(modules)) in tool_of_module:
            tool_of_name[name.encode("ascii")] = tool_of_module[next(iter(modules))]
    lines = text.splitlines(keepends=True)
    # Only the lines from the moved names' block on are cut: a line of that shape elsewhere stays in every key.
    block = next((at for at, line in enumerate(lines) if line.rstrip() == b"if TYPE_CHECKING:"), len(lines))
    frame, cut, at = lines[:block], {}, block
    while at < len(lines):
        line, span, tool = lines[at], 1, None
        module = re.match(rb" +from \\w+\\._tool_models\\.(\\w+) import ", line)
        entry = re.fullmatch(rb' +"(\\w+)": "\\w+\\._tool_models\\.(\\w+)",\\r?\\n', line)
        listed = re.fullmatch(rb' +"(\\w+)",\\r?\\n', line)
        if module is not None:
            tool = tool_of_module.get(module.group(1).decode("ascii"))
            if line.rstrip().endswith(b"("):
                while at + span < len(lines) and lines[at + span - 1].strip() != b")":
                    span += 1
        elif entry is not None:
            tool = tool_of_module.get(entry.group(2).decode("ascii"))
            if tool is not None and tool_of_name.get(entry.group(1)) != tool:
                tool = None
        elif listed is not None:
            tool = tool_of_name.get(listed.group(1))
        if tool is None:
            frame.extend(lines[at : at + span])
        else:
            cut.setdefault(tool, []).extend(lines[at : at + span])
        at += span
    return b"".join(frame), cut


def only_models(text):
    # Whether a tool's own module only makes its models when imported: imports from where models come from, and
    # classes and aliases whose code calls nothing but pydantic's and the runtime's model makers. Anything else
    # could reach other tools (their specs, the runtime) that a check of some tools only would not run again.
    import ast

    origins = ("__future__", "typing", "typing_extensions", "pydantic", f"{package}._runtime", f"{package}.models")
    makers = {"Field", "ConfigDict", "FrozenSize", "TypeAliasType", "StringConstraints"}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level or not (node.module in origins or node.module.startswith(f"{package}._tool_models.")):
                return False
        elif isinstance(node, ast.Call):
            func = node.func
            rebuild = isinstance(func, ast.Attribute) and func.attr == "model_rebuild"
            if not rebuild and not (isinstance(func, ast.Name) and func.id in makers):
                return False
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not all(isinstance(target, ast.Name) for target in targets):
                return False
        elif isinstance(node, ast.ClassDef):
            if node.decorator_list or node.keywords:
                return False
        elif isinstance(
            node,
            (ast.Import, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.AugAssign, ast.Delete, ast.Global,
             ast.Nonlocal, ast.NamedExpr, ast.With, ast.Try, ast.If, ast.For, ast.While, ast.Raise, ast.Await),
        ):
            return False
    return True


def served_from(models, imported):
    # Each name models.py's lazy table sends to one of the model modules imported here is the one that module
    # defines: `from <package>.models import X` finds it. (A name the table lacks fails its tool's validators.)
    import re

    path = os.path.join(folder, package, "models.py")
    if sources is not None:
        text = sources[path]
    else:
        with open(path, "rb") as handle:
            text = handle.read()
    for name, module in re.findall(rb'^ +"(\\w+)": "\\w+\\._tool_models\\.(\\w+)",\\r?$', text, re.M):
        module = module.decode("ascii")
        if module in imported:
            name = name.decode("ascii")
            defined = getattr(sys.modules[f"{package}._tool_models.{module}"], name, None)
            if defined is None or getattr(models, name, None) is not defined:
                raise LookupError(f"models.py serves {name} from _tool_models/{module}.py, which does not define it")


modules = [name for name in python_modules(f"{folder}/{package}") if name != "__main__"]
# Each shard imports the whole package and its share of the per-tool model modules and tools, but for the tools
# whose part passed before (`passed`, sent only with the files) and their own modules.
keys, skipped, skipped_modules = {}, set(), set()
try:
    importlib.import_module(package)
    for module in modules:
        importlib.import_module(f"{package}.{module}")
    if sources is not None and job.get("passed") is not None:
        import hashlib

        definitions = getattr(importlib.import_module(f"{package}.tools").TOOLS, "_definitions", None)
        if isinstance(definitions, dict):
            keys, owned = tool_parts(definitions)
            passed = set(job["passed"])
            skipped = {tool for tool, key in keys.items() if key in passed}
            skipped_modules = {module for tool in skipped for module in owned[tool]}
            if skipped and not all(
                only_models(sources[os.path.join(folder, package, "_tool_models", f"{module}.py")])
                for tool in owned if tool not in skipped for module in owned[tool]
            ):  # a module imported beside the skipped tools may do more than make its models: check them all
                skipped, skipped_modules = set(), set()
    own_modules = python_modules(f"{folder}/{package}/_tool_models")[shard::shards]
    for module in own_modules:
        if module not in skipped_modules:
            importlib.import_module(f"{package}._tool_models.{module}")
        elif cache:  # its compiled code stays in the cache for the build that checks it again
            path = os.path.join(folder, package, "_tool_models", f"{module}.py")
            used.append(hashlib.blake2b(salt + sources[path], digest_size=20).hexdigest())
    served_from(importlib.import_module(f"{package}.models"), [m for m in own_modules if m not in skipped_modules])
except Exception as error:
    report(imported=False, error=described(error))
    raise SystemExit(0)

try:
    tools = importlib.import_module(f"{package}.tools")
    validators = importlib.import_module(f"{package}.validators")
    runtime = importlib.import_module(f"{package}._runtime")
    tools.Tools()
except Exception as error:
    report(imported=False, error=described(error))
    raise SystemExit(0)
refused = runtime.ToolgenValidationError
problems = []
own_tools = list(tools.TOOLS)[shard::shards]
for name in own_tools:
    if name in skipped:
        continue
    checks = []
    try:
        spec = tools.TOOLS[name]
        sample = runtime.example_value(spec.input_schema or {})
        checks = [
            ("its example arguments", validators.validate_tool_arguments, sample),
            ("its example arguments as JSON text", validators.validate_tool_arguments, json.dumps(sample)),
            ("arguments of the wrong type", validators.validate_tool_arguments, [None]),
        ]
        if spec.output_schema is not None:
            result = runtime.example_value(spec.output_schema)
            checks.append(("its example result", validators.validate_tool_result, result))
    except Exception as error:
        problems.append({"tool": name, "value": "an example value", "error": described(error)})
    for label, validator, value in checks:
        try:
            validator(name, value)
        except refused:
            pass
        except Exception as error:
            problems.append({"tool": name, "value": label, "error": described(error)})
            break


def environment():
    # What the package imported from outside itself, and where it looked: the record of a check that passed
    # (toolgen.output.checked_packages) holds for the same bytes only while these are as they are now.
    paths = {getattr(module, "__file__", None) for module in list(sys.modules.values())}
    paths.update(sys.path)
    found = []
    for path in sorted(path for path in paths if isinstance(path, str) and path and not path.startswith(folder)):
        try:
            stat = os.stat(path)
        except (OSError, ValueError):
            continue
        # the stamp of toolgen.output.checked_packages
        found.append([path, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino])
    return found


parts = sorted(keys.values()) if shard == 0 else []
report(imported=True, problems=problems, tools=len(own_tools), compiled=used, environment=environment(), parts=parts)
"""
