import type { PythonEnvSpec } from '../../src/tasks/schema.ts';
import { SETUP_UNAVAILABLE_MARKER } from '../../src/env/setup.ts';
import { ownValue } from '../../src/own.ts';

/**
 * The nltk data the v2 authors' Docker image holds (its Dockerfile downloads punkt,
 * wordnet and omw-1.4 with network access); the v1 harness ran with network, so answers
 * that call `nltk.download` got the data there too. Every nltk problem's env gets them,
 * in `<env>/nltk_data`, a folder nltk searches (`sys.prefix/nltk_data`).
 */
export const NLTK_DATA_PACKAGES = ['punkt', 'wordnet', 'omw-1.4'];

/** Where a user points benchgym at a local copy of `nltk_data` (with `tokenizers/punkt`, `corpora/wordnet`, `corpora/omw-1.4`). */
export const NLTK_DATA_ENV = 'BENCHGYM_NLTK_DATA';

/** What nltk.data.find looks for, per package (zipped or unpacked). */
const RESOURCES: Record<string, string> = { punkt: 'tokenizers/punkt', wordnet: 'corpora/wordnet', 'omw-1.4': 'corpora/omw-1.4' };

/**
 * Copies the data from BENCHGYM_SETUP_INPUT when given, else downloads it (nltk's
 * downloader reads raw.githubusercontent.com); then checks that nltk finds each package.
 * Runs on Python 3.7 to 3.10 and every nltk the data pins.
 */
export function nltkSetupScript(packages = NLTK_DATA_PACKAGES): string {
  const resources = packages.map((p) => [p, ownValue(RESOURCES, p) ?? p]);
  return (
    `import os, shutil, sys
packages = ${JSON.stringify(resources)}
dest = os.path.join(sys.prefix, "nltk_data")
source = os.environ.get("BENCHGYM_SETUP_INPUT")
problem = ""
if source:
    for root, dirs, files in os.walk(source):
        rel = os.path.relpath(root, source)
        os.makedirs(os.path.join(dest, rel), exist_ok=True)
        for f in files:
            shutil.copy2(os.path.join(root, f), os.path.join(dest, rel, f))
else:
    import io, contextlib
    import nltk
    for name, _ in packages:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                ok = nltk.download(name, download_dir=dest, quiet=True, raise_on_error=True)
            except Exception as e:
                ok = False
                out.write(repr(e))
        if not ok and not problem:
            problem = "nltk.download(%r) failed: %s" % (name, " ".join(out.getvalue().split())[-300:] or "no reason given")
import nltk
nltk.data.path.insert(0, dest)
missing = []
for name, resource in packages:
    try:
        nltk.data.find(resource)
    except LookupError:
        missing.append(name)
if missing:
    where = ("not in %s=%s" % (${JSON.stringify(NLTK_DATA_ENV)}, source)) if source else (problem or "not downloaded")
    print(${JSON.stringify(SETUP_UNAVAILABLE_MARKER)} + " %s missing (%s); supply a local nltk_data folder holding them with ` +
    `${NLTK_DATA_ENV}=DIR" % (", ".join(missing), where))
    sys.exit(3)
print("nltk data ready in %s: %s" % (dest, ", ".join(n for n, _ in packages)))
`
  );
}

/** The env setup step of an nltk problem. */
export function nltkSetup(): NonNullable<PythonEnvSpec['setup']> {
  return { description: `nltk data ${NLTK_DATA_PACKAGES.join(', ')}`, script: nltkSetupScript(), inputEnv: NLTK_DATA_ENV };
}
