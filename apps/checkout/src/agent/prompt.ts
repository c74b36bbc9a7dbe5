/** The order ids and the customer's address a prompt is about. */
export interface OrderRequest {
  orderIds: string[]
  email: string
}

/** An order id the prompt (and the scripted model's parser) can carry unambiguously. */
export const ORDER_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/

/** The user's prompt: plain English a real model understands, in a form the scripted model can parse back. */
export function orderPrompt({ orderIds, email }: OrderRequest): string {
  return orderIds.length === 1
    ? `Place order ${orderIds[0]} and email the receipt to ${email}.`
    : `Place orders ${orderIds.join(', ')} and email each receipt to ${email}.`
}

/** Reads an order prompt back; undefined when the text is not one. */
export function parseOrderPrompt(text: string): OrderRequest | undefined {
  const orders = /\borders?\s+([A-Za-z0-9_-]+(?:,\s*[A-Za-z0-9_-]+)*)/i.exec(text)
  const email = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/.exec(text)
  if (!orders?.[1] || !email) return undefined
  return { orderIds: orders[1].split(/,\s*/), email: email[0] }
}

/** The email body for an order: names the order, so the scripted model can tell which orders were notified. */
export function receiptBody(orderId: string, chargeId: string): string {
  return `Your order ${orderId} is paid (charge ${chargeId}). The invoice is on its way.`
}
