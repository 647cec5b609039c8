import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CoderEval's Java replacement step (benchgym envs/codereval): put a candidate in place of a
 * method. Usage: java ReplaceMethod.java FILE METHOD CANDIDATE_FILE. The first declaration of
 * METHOD with a body (its modifiers, annotations and Javadoc-free header through the matching
 * closing brace, strings, characters and comments skipped) is replaced by the candidate,
 * re-indented to the declaration's column. Exit 0 on success, 3 when there is no such method.
 */
public class ReplaceMethod {
  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: java ReplaceMethod.java FILE METHOD CANDIDATE_FILE");
      System.exit(2);
    }
    Path file = Path.of(args[0]);
    String src = Files.readString(file, StandardCharsets.UTF_8);
    String candidate = Files.readString(Path.of(args[2]), StandardCharsets.UTF_8);
    int[] span = find(src, args[1]);
    if (span == null) {
      System.err.println("no method " + args[1] + " with a body in " + file);
      System.exit(3);
    }
    int lineStart = src.lastIndexOf('\n', span[0]) + 1;
    String indent = src.substring(lineStart, span[0]);
    StringBuilder out = new StringBuilder(src.substring(0, lineStart));
    String[] lines = candidate.strip().split("\n", -1);
    int common = Integer.MAX_VALUE;
    for (int i = 1; i < lines.length; i++) {
      if (lines[i].isBlank()) continue;
      int n = lines[i].length() - lines[i].stripLeading().length();
      common = Math.min(common, n);
    }
    // Lines after the first lose their common indentation (the candidate's own column) and take the method's.
    int base = common == Integer.MAX_VALUE ? 0 : common;
    for (int i = 0; i < lines.length; i++) {
      String l = i == 0 ? lines[i].stripLeading() : lines[i].substring(Math.min(base, lines[i].length() - lines[i].stripLeading().length()));
      out.append(l.isBlank() ? "" : indent + l).append(i < lines.length - 1 ? "\n" : "");
    }
    out.append(src.substring(span[1]));
    Files.writeString(file, out.toString(), StandardCharsets.UTF_8);
  }

  /** [start of the declaration's first token on its line, end after the closing brace], or null. */
  static int[] find(String s, String name) {
    int depth = 0;
    int i = 0;
    int stmtStart = -1;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c == '/' && i + 1 < s.length() && s.charAt(i + 1) == '/') { i = s.indexOf('\n', i); if (i < 0) return null; continue; }
      if (c == '/' && i + 1 < s.length() && s.charAt(i + 1) == '*') { i = s.indexOf("*/", i + 2); if (i < 0) return null; i += 2; continue; }
      if (c == '"' || c == '\'') { i = skipLiteral(s, i); continue; }
      if (c == '{') { depth++; i++; stmtStart = -1; continue; }
      if (c == '}') { depth--; i++; stmtStart = -1; continue; }
      if (c == ';') { i++; stmtStart = -1; continue; }
      if (!Character.isWhitespace(c) && stmtStart < 0) stmtStart = i;
      // A member of a type body (depth 1): NAME( ... ) [throws ...] {
      if (depth == 1 && Character.isJavaIdentifierStart(c) && (i == 0 || !Character.isJavaIdentifierPart(s.charAt(i - 1))) && s.startsWith(name, i)) {
        int j = i + name.length();
        while (j < s.length() && Character.isWhitespace(s.charAt(j))) j++;
        if (j < s.length() && s.charAt(j) == '(' && (i + name.length() >= s.length() || !Character.isJavaIdentifierPart(s.charAt(i + name.length())))) {
          int open = bodyOpen(s, j);
          if (open >= 0) return new int[] {stmtStart, matching(s, open) + 1};
        }
      }
      i++;
    }
    return null;
  }

  /** After the parameter list at `paren`: the index of the body's '{', or -1 (abstract, a call). */
  static int bodyOpen(String s, int paren) {
    int d = 0;
    int i = paren;
    for (; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\'') { i = skipLiteral(s, i) - 1; continue; }
      if (c == '(') d++;
      else if (c == ')' && --d == 0) break;
    }
    for (i++; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '{') return i;
      if (c == ';' || c == '=' || c == ')') return -1;
    }
    return -1;
  }

  static int matching(String s, int open) {
    int d = 0;
    for (int i = open; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '/' && i + 1 < s.length() && s.charAt(i + 1) == '/') { i = s.indexOf('\n', i); continue; }
      if (c == '/' && i + 1 < s.length() && s.charAt(i + 1) == '*') { i = s.indexOf("*/", i + 2) + 1; continue; }
      if (c == '"' || c == '\'') { i = skipLiteral(s, i) - 1; continue; }
      if (c == '{') d++;
      else if (c == '}' && --d == 0) return i;
    }
    return s.length() - 1;
  }

  static int skipLiteral(String s, int i) {
    char q = s.charAt(i);
    if (q == '"' && s.startsWith("\"\"\"", i)) { int e = s.indexOf("\"\"\"", i + 3); return e < 0 ? s.length() : e + 3; }
    for (int j = i + 1; j < s.length(); j++) {
      char c = s.charAt(j);
      if (c == '\\') { j++; continue; }
      if (c == q || c == '\n') return j + 1;
    }
    return s.length();
  }
}
