from decimal import Decimal

import pytest

from shop import Inventory, OutOfStockError, Product
from shop.pricing import money, percent_of


def make_inventory():
    inventory = Inventory()
    inventory.add_product(Product("MUG", "Coffee mug", Decimal("12.50")), stock=5)
    inventory.add_product(Product("GIFT25", "Gift card", Decimal("25.00"), taxable=False), stock=100)
    return inventory


def test_product_price_is_rounded_to_cents():
    assert Product("PEN", "Pen", Decimal("1.005")).price == Decimal("1.01")
    assert Product("PEN", "Pen", "2").price == Decimal("2.00")


def test_product_rejects_float_and_negative_prices():
    with pytest.raises(TypeError):
        Product("PEN", "Pen", 1.10)
    with pytest.raises(ValueError):
        Product("PEN", "Pen", Decimal("-1"))


def test_stock_levels():
    inventory = make_inventory()
    assert inventory.available("MUG") == 5
    inventory.restock("MUG", 3)
    assert inventory.available("MUG") == 8


def test_reserve_and_release():
    inventory = make_inventory()
    inventory.reserve("MUG", 2)
    assert inventory.available("MUG") == 3
    inventory.release("MUG", 2)
    assert inventory.available("MUG") == 5


def test_reserve_more_than_available():
    inventory = make_inventory()
    with pytest.raises(OutOfStockError):
        inventory.reserve("MUG", 6)
    assert inventory.available("MUG") == 5


@pytest.mark.parametrize("quantity", [0, -1, 1.5, True])
def test_invalid_quantities(quantity):
    inventory = make_inventory()
    with pytest.raises(ValueError):
        inventory.reserve("MUG", quantity)


def test_unknown_and_duplicate_sku():
    inventory = make_inventory()
    with pytest.raises(KeyError):
        inventory.available("NOPE")
    with pytest.raises(ValueError):
        inventory.add_product(Product("MUG", "Another mug", Decimal("1.00")))


def test_money_helpers():
    assert money("2.675") == Decimal("2.68")
    assert percent_of("19.99", "8.25") == Decimal("1.65")
    assert percent_of(Decimal("40.00"), 10) == Decimal("4.00")
