"""toolgen.ExitCode names the command's exit statuses; every error toolgen raises carries its own as `.exit_code`."""

import toolgen

for code in toolgen.ExitCode:
    print(f"{code.value:>3}  {code.name}")

# The same number the command exits with, from Python: catch the error, read its code.
assert toolgen.InvalidInputError.exit_code is toolgen.ExitCode.INVALID_INPUT  # 3
assert toolgen.LintFailedError.exit_code is toolgen.ExitCode.FINDINGS  # 1
assert toolgen.EnvironmentProblem.exit_code is toolgen.ExitCode.INTERNAL  # 4
