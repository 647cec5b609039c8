from decimal import Decimal

import pytest

from shop import Cart, Inventory, OutOfStockError, Product, render_receipt


def make_inventory():
    inventory = Inventory()
    inventory.add_product(Product("MUG", "Coffee mug", Decimal("20.00")), stock=10)
    inventory.add_product(Product("TEA", "Green tea", Decimal("19.99")), stock=10)
    inventory.add_product(Product("LEAF", "Loose leaf", Decimal("11.99")), stock=10)
    inventory.add_product(Product("GIFT", "Gift card", Decimal("25.00"), taxable=False), stock=10)
    return inventory


def test_add_reserves_stock():
    inventory = make_inventory()
    cart = Cart(inventory)
    cart.add("MUG", 3)
    cart.add("MUG")
    assert cart.quantity("MUG") == 4
    assert inventory.available("MUG") == 6


def test_add_more_than_available_raises():
    inventory = make_inventory()
    cart = Cart(inventory)
    with pytest.raises(OutOfStockError):
        cart.add("MUG", 11)
    assert cart.quantity("MUG") == 0
    assert inventory.available("MUG") == 10


def test_remove_releases_stock():
    inventory = make_inventory()
    cart = Cart(inventory)
    cart.add("MUG", 3)
    cart.remove("MUG", 1)
    assert cart.quantity("MUG") == 2
    cart.remove("MUG")
    assert cart.quantity("MUG") == 0
    assert inventory.available("MUG") == 10
    with pytest.raises(ValueError):
        cart.remove("MUG")


def test_subtotal_sums_lines():
    cart = Cart(make_inventory())
    cart.add("TEA", 3)
    cart.add("GIFT", 1)
    assert [line_total for _, _, line_total in cart.lines()] == [Decimal("59.97"), Decimal("25.00")]
    assert cart.subtotal() == Decimal("84.97")


def test_empty_cart_totals_are_zero():
    cart = Cart(make_inventory())
    assert cart.subtotal() == Decimal("0.00")
    assert cart.tax() == Decimal("0.00")
    assert cart.total() == Decimal("0.00")


def test_tax_only_on_taxable_items():
    cart = Cart(make_inventory())
    cart.add("TEA", 3)
    cart.add("GIFT", 1)
    assert cart.tax() == Decimal("4.95")
    assert cart.total() == Decimal("89.92")


def test_custom_tax_rate():
    cart = Cart(make_inventory(), tax_rate="5")
    cart.add("MUG", 2)
    assert cart.tax() == Decimal("2.00")
    assert cart.total() == Decimal("42.00")


def test_coupon_discount_amount():
    cart = Cart(make_inventory())
    cart.add("TEA", 3)
    cart.apply_coupon(15)
    assert cart.discount() == Decimal("9.00")


def test_coupon_replaces_previous_coupon():
    cart = Cart(make_inventory())
    cart.add("MUG", 2)
    cart.apply_coupon(10)
    cart.apply_coupon("12.5")
    assert cart.discount() == Decimal("5.00")


@pytest.mark.parametrize("percent", [0, -5, 101, "100.01"])
def test_invalid_coupon_rejected(percent):
    cart = Cart(make_inventory())
    with pytest.raises(ValueError):
        cart.apply_coupon(percent)
    assert cart.coupon_percent == 0


def test_coupon_on_untaxed_items_only():
    cart = Cart(make_inventory())
    cart.add("GIFT", 2)
    cart.apply_coupon(25)
    assert cart.subtotal() == Decimal("50.00")
    assert cart.discount() == Decimal("12.50")
    assert cart.tax() == Decimal("0.00")
    assert cart.total() == Decimal("37.50")


def test_receipt_without_coupon():
    cart = Cart(make_inventory())
    cart.add("MUG", 2)
    assert render_receipt(cart) == "\n".join(
        [
            "2 x Coffee mug             40.00",
            "--------------------------------",
            "Subtotal                   40.00",
            "Tax (8.25%)                 3.30",
            "TOTAL                      43.30",
        ]
    )
