/** Compiles a glob (`**`, `*`, `?`, `[...]`, `{a,b}`) to a RegExp over POSIX relative paths. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  let inGroup = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        i++;
        if (glob[i + 1] === '/') {
          i++;
          re += '(?:.*/)?';
        } else re += '.*';
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        re += `[${glob.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else if (c === '{') {
      inGroup++;
      re += '(?:';
    } else if (c === '}' && inGroup) {
      inGroup--;
      re += ')';
    } else if (c === ',' && inGroup) re += '|';
    else re += c.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** True when `relPath` matches any glob; a glob without a slash also matches the base name. */
export function matchesAny(relPath: string, globs: string[]): boolean {
  const base = relPath.slice(relPath.lastIndexOf('/') + 1);
  return globs.some((g) => {
    const re = globToRegExp(g);
    return re.test(relPath) || (!g.includes('/') && re.test(base));
  });
}
