-- The W3C traceparent of the delivery that wrote the event, when it was traced: the relay sends the
-- event in that trace, so that one payment's trace runs from its callback to its coupon.
ALTER TABLE outbox_event ADD COLUMN traceparent text;
