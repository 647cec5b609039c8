"""A tiny shop back end: products, stock keeping, carts and receipts."""

from .cart import Cart
from .inventory import Inventory, OutOfStockError, Product
from .receipt import render_receipt

__all__ = ["Cart", "Inventory", "OutOfStockError", "Product", "render_receipt"]
