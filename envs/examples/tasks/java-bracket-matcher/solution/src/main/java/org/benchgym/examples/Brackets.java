package org.benchgym.examples;

import java.util.Arrays;
import java.util.Objects;

/** Utilities for checking bracket structure in text. */
public final class Brackets {

    private Brackets() {
    }

    /**
     * Returns whether the brackets in {@code s} are balanced.
     *
     * <p>Three kinds of brackets are recognised: {@code ()}, {@code []} and {@code {}}. The
     * brackets in {@code s} are balanced if every opening bracket is closed by a closing bracket of
     * the same kind, brackets are closed in the reverse order in which they were opened (so
     * {@code "([)]"} is not balanced), and there is no closing bracket without a matching opening
     * bracket before it. Every other character, including {@code <} and {@code >}, is ignored. The
     * empty string and strings without brackets are balanced.
     *
     * <p>The check must work for arbitrarily long inputs and arbitrarily deep nesting (for example
     * a million opening brackets followed by a million closing ones).
     *
     * @param s the text to check
     * @return {@code true} if the brackets in {@code s} are balanced
     * @throws NullPointerException if {@code s} is {@code null}
     */
    public static boolean isBalanced(String s) {
        Objects.requireNonNull(s, "s");
        // An explicit char stack (no recursion, no boxing) keeps deep nesting cheap.
        char[] expected = new char[16];
        int depth = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            char closer;
            switch (c) {
                case '(' -> closer = ')';
                case '[' -> closer = ']';
                case '{' -> closer = '}';
                case ')', ']', '}' -> {
                    if (depth == 0 || expected[--depth] != c) {
                        return false;
                    }
                    continue;
                }
                default -> {
                    continue;
                }
            }
            if (depth == expected.length) {
                expected = Arrays.copyOf(expected, depth * 2);
            }
            expected[depth++] = closer;
        }
        return depth == 0;
    }
}
