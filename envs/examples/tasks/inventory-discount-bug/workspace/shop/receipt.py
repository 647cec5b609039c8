"""Plain-text receipts."""

from .cart import Cart

WIDTH = 32


def _row(label: str, amount) -> str:
    text = f"{amount:.2f}"
    return f"{label:<{WIDTH - len(text)}}{text}"


def render_receipt(cart: Cart) -> str:
    """Render ``cart`` as a fixed-width receipt (one line per row)."""
    rows = []
    for product, quantity, line_total in cart.lines():
        rows.append(_row(f"{quantity} x {product.name}"[: WIDTH - 12], line_total))
    rows.append("-" * WIDTH)
    rows.append(_row("Subtotal", cart.subtotal()))
    if cart.coupon_percent:
        rows.append(_row(f"Coupon ({cart.coupon_percent.normalize():f}%)", -cart.discount()))
    rows.append(_row(f"Tax ({cart.tax_rate.normalize():f}%)", cart.tax()))
    rows.append(_row("TOTAL", cart.total()))
    return "\n".join(rows)
