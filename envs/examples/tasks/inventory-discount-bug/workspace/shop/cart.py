"""Shopping cart: line items, coupons, tax and totals."""

from decimal import Decimal

from .inventory import Inventory, Product
from .pricing import money, percent_of, to_decimal

DEFAULT_TAX_RATE = Decimal("8.25")  # percent


class Cart:
    """A customer's cart.

    Adding items reserves them in the inventory; removing them releases the
    reservation. A single percentage coupon may be applied to the whole cart.
    Only products marked ``taxable`` are subject to sales tax.
    """

    def __init__(self, inventory: Inventory, tax_rate=DEFAULT_TAX_RATE):
        self.inventory = inventory
        self.tax_rate = to_decimal(tax_rate)
        self.coupon_percent = Decimal(0)
        self._quantities = {}

    # -- items ---------------------------------------------------------------

    def add(self, sku: str, quantity: int = 1) -> None:
        self.inventory.reserve(sku, quantity)
        self._quantities[sku] = self._quantities.get(sku, 0) + quantity

    def remove(self, sku: str, quantity: int = None) -> None:
        """Remove ``quantity`` units of ``sku`` (all of them if omitted)."""
        in_cart = self._quantities.get(sku, 0)
        if quantity is None:
            quantity = in_cart
        if not 0 < quantity <= in_cart:
            raise ValueError(f"cannot remove {quantity} of {sku!r}; cart has {in_cart}")
        self.inventory.release(sku, quantity)
        if quantity == in_cart:
            del self._quantities[sku]
        else:
            self._quantities[sku] = in_cart - quantity

    def quantity(self, sku: str) -> int:
        return self._quantities.get(sku, 0)

    def lines(self):
        """Return ``(product, quantity, line_total)`` tuples in insertion order."""
        result = []
        for sku, quantity in self._quantities.items():
            product: Product = self.inventory.product(sku)
            result.append((product, quantity, money(product.price * quantity)))
        return result

    # -- coupon --------------------------------------------------------------

    def apply_coupon(self, percent) -> None:
        """Apply a percentage coupon (0 < percent <= 100), replacing any previous one."""
        percent = to_decimal(percent)
        if not 0 < percent <= 100:
            raise ValueError(f"coupon percent must be in (0, 100], got {percent}")
        self.coupon_percent = percent

    # -- amounts -------------------------------------------------------------

    def subtotal(self) -> Decimal:
        """Sum of all line totals, before coupon and tax."""
        return sum((line_total for _, _, line_total in self.lines()), Decimal("0.00"))

    def discount(self) -> Decimal:
        """Amount taken off the subtotal by the coupon."""
        return percent_of(self.subtotal(), self.coupon_percent)

    def taxable_amount(self) -> Decimal:
        """The amount sales tax is charged on."""
        return sum(
            (line_total for product, _, line_total in self.lines() if product.taxable),
            Decimal("0.00"),
        )

    def tax(self) -> Decimal:
        return percent_of(self.taxable_amount(), self.tax_rate)

    def total(self) -> Decimal:
        """What the customer pays."""
        return self.subtotal() - self.discount() + self.tax()
