package org.benchgym.examples;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BracketsHiddenTest {

    @Test
    void emptyStringIsBalanced() {
        assertTrue(Brackets.isBalanced(""));
    }

    @Test
    void textWithoutBracketsIsBalanced() {
        assertTrue(Brackets.isBalanced("hello, world"));
        assertTrue(Brackets.isBalanced("a < b && c > d"));
    }

    @Test
    void otherCharactersAreIgnored() {
        assertTrue(Brackets.isBalanced("int f(int[] a) { return a[0]; }"));
        assertTrue(Brackets.isBalanced("Map<String, List<int[]>> m = new HashMap<>();"));
        assertFalse(Brackets.isBalanced("if (x > 0 { y(); }"));
    }

    @Test
    void angleBracketsAreNotBrackets() {
        assertTrue(Brackets.isBalanced("<"));
        assertTrue(Brackets.isBalanced(">"));
        assertTrue(Brackets.isBalanced("(<)>"));
    }

    @Test
    void sequencesAndNestingAreBalanced() {
        assertTrue(Brackets.isBalanced("()[]{}"));
        assertTrue(Brackets.isBalanced("(((())))"));
        assertTrue(Brackets.isBalanced("{[]}([]){()}"));
        assertTrue(Brackets.isBalanced("[({}[])]{}"));
    }

    @Test
    void mismatchedKindsAreNotBalanced() {
        assertFalse(Brackets.isBalanced("(]"));
        assertFalse(Brackets.isBalanced("[}"));
        assertFalse(Brackets.isBalanced("{)"));
        assertFalse(Brackets.isBalanced("{[}]"));
        assertFalse(Brackets.isBalanced("(()]"));
    }

    @Test
    void closingBeforeOpeningIsNotBalanced() {
        assertFalse(Brackets.isBalanced(")("));
        assertFalse(Brackets.isBalanced("]["));
        assertFalse(Brackets.isBalanced("}{"));
        assertFalse(Brackets.isBalanced("())("));
    }

    @Test
    void lonelyBracketsAreNotBalanced() {
        assertFalse(Brackets.isBalanced("("));
        assertFalse(Brackets.isBalanced(")"));
        assertFalse(Brackets.isBalanced("x]"));
        assertFalse(Brackets.isBalanced("{x"));
    }

    @Test
    void extraClosingBracketAtEndIsNotBalanced() {
        assertFalse(Brackets.isBalanced("()[]{}}"));
        assertFalse(Brackets.isBalanced("(()))"));
    }

    @Test
    void countingAloneIsNotEnough() {
        // Same number of openers and closers of every kind, but in the wrong order.
        assertFalse(Brackets.isBalanced("([)]"));
        assertFalse(Brackets.isBalanced("[(])"));
        assertFalse(Brackets.isBalanced("{(})"));
        assertFalse(Brackets.isBalanced(")()("));
    }

    @Test
    void veryDeepNestingIsBalanced() {
        int depth = 1_000_000;
        String s = "(".repeat(depth / 2) + "[{".repeat(depth / 4) + "}]".repeat(depth / 4) + ")".repeat(depth / 2);
        assertTrue(Brackets.isBalanced(s));
    }

    @Test
    void veryDeepNestingWithOneMismatchIsNotBalanced() {
        int depth = 1_000_000;
        String s = "(".repeat(depth) + "]" + ")".repeat(depth - 1);
        assertFalse(Brackets.isBalanced(s));
    }

    @Test
    void longFlatInputIsBalanced() {
        assertTrue(Brackets.isBalanced("()[]{}".repeat(500_000)));
        assertFalse(Brackets.isBalanced("()[]{}".repeat(500_000) + "("));
    }

    @Test
    void nullIsRejected() {
        assertThrows(NullPointerException.class, () -> Brackets.isBalanced(null));
    }
}
