package dev.idem.orders;

public enum OrderStatus { WAIT_PAY, PAID, CLOSED }
