"""Product catalogue and stock levels."""

from dataclasses import dataclass
from decimal import Decimal

from .pricing import money


class OutOfStockError(Exception):
    """Raised when more units are requested than are available."""


@dataclass(frozen=True)
class Product:
    """A sellable item. ``price`` is the unit price before tax."""

    sku: str
    name: str
    price: Decimal
    taxable: bool = True

    def __post_init__(self):
        price = money(self.price)
        if price < 0:
            raise ValueError(f"price of {self.sku} must not be negative")
        object.__setattr__(self, "price", price)


class Inventory:
    """Keeps track of products and how many units of each are available."""

    def __init__(self):
        self._products = {}
        self._stock = {}

    def add_product(self, product: Product, stock: int = 0) -> None:
        if product.sku in self._products:
            raise ValueError(f"duplicate SKU {product.sku!r}")
        self._products[product.sku] = product
        self._stock[product.sku] = 0
        if stock:
            self.restock(product.sku, stock)

    def product(self, sku: str) -> Product:
        try:
            return self._products[sku]
        except KeyError:
            raise KeyError(f"unknown SKU {sku!r}") from None

    def available(self, sku: str) -> int:
        self.product(sku)
        return self._stock[sku]

    def restock(self, sku: str, quantity: int) -> None:
        _check_quantity(quantity)
        self.product(sku)
        self._stock[sku] += quantity

    def reserve(self, sku: str, quantity: int) -> None:
        """Take ``quantity`` units out of the available stock."""
        _check_quantity(quantity)
        available = self.available(sku)
        if quantity > available:
            raise OutOfStockError(f"only {available} of {sku!r} available, {quantity} requested")
        self._stock[sku] = available - quantity

    def release(self, sku: str, quantity: int) -> None:
        """Put previously reserved units back into stock."""
        self.restock(sku, quantity)


def _check_quantity(quantity: int) -> None:
    if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity <= 0:
        raise ValueError(f"quantity must be a positive integer, got {quantity!r}")
