package dev.idem.payments.wechatpay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.payments.bills.Bill;
import dev.idem.payments.bills.BillRead;
import dev.idem.testing.GatewayApi.BillLine;
import dev.idem.testing.WeChatPaySimulator;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.Test;

/** WeChat Pay's trade bill CSV read as its documentation writes it, and refused when it is not whole. */
class WeChatPayBillsTest {

    static final LocalDate DAY = LocalDate.of(2026, 12, 1);
    static final Instant AT = Instant.parse("2026-12-01T02:03:04Z");

    static String csv(BillLine... lines) {
        return new String(WeChatPaySimulator.tradeBill(List.of(lines)), StandardCharsets.UTF_8);
    }

    static BillRead read(String csv) {
        return new WeChatPayBills(null).read(DAY, csv.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void paymentsAndRefundsAreReadByTheHeadersNames() {
        BillRead read = read("\uFEFF" + csv(BillLine.payment("o-1", "4200001", 1999, AT),
                new BillLine(true, "o-1", "4200001", 500, AT.plusSeconds(60), "50300001")));
        List<Bill.Line> lines = assertInstanceOf(BillRead.Valid.class, read).bill().lines();
        assertEquals(2, lines.size());
        assertEquals(new Bill.Line(Bill.Kind.PAYMENT, "o-1", "4200001", 1999, AT, "SUCCESS", "0", 0), lines.get(0));
        assertEquals(Bill.Kind.REFUND, lines.get(1).kind());
        assertEquals("50300001", lines.get(1).refundNo());
        assertEquals(500, lines.get(1).refundCents());
    }

    @Test
    void aSummaryThatCountsOnlyThePaymentsIsTakenToo() {
        String csv = csv(BillLine.payment("o-5", "4200005", 1999, AT), new BillLine(true, "o-5", "4200005", 500, AT, "503005"));
        String paymentsOnly = csv.replaceFirst("\r\n`2,", "\r\n`1,");
        assertEquals(2, assertInstanceOf(BillRead.Valid.class, read(paymentsOnly)).bill().lines().size());
        assertTrue(reason(csv.replaceFirst("\r\n`2,", "\r\n`3,")).contains("summary counts 3 lines"));
    }

    @Test
    void aRevokedTradeIsCountedAndNotAPayment() {
        String revoked = csv(BillLine.payment("o-2", "4200002", 100, AT)).replace("`SUCCESS,", "`REVOKED,");
        Bill bill = assertInstanceOf(BillRead.Valid.class, read(revoked)).bill();
        assertEquals(Bill.Kind.OTHER, bill.lines().get(0).kind());
    }

    @Test
    void aBillThatIsNotWholeIsRefused() {
        String whole = csv(BillLine.payment("o-3", "4200003", 1999, AT), BillLine.payment("o-4", "4200004", 1999, AT));
        String[] rows = whole.split("\r\n");
        String lineDropped = String.join("\r\n", rows[0], rows[1], rows[3], rows[4]);
        assertTrue(reason(lineDropped).contains("summary counts 2 lines, the bill has 1"), reason(lineDropped));
        assertTrue(reason(String.join("\r\n", rows[0], rows[1], rows[2])).contains("summary"));
        assertTrue(reason(whole.replace("`2026-12-01 10:03:04", "`2026-12-01 25:03:04")).contains("line 2"));
        assertTrue(reason(whole.replace(",`o-3,", ",`,")).contains("line 2"));
        assertTrue(reason(whole.replace("商户订单号", "订单号")).contains("商户订单号"));
        assertTrue(reason("").contains("empty"));
    }

    static String reason(String csv) {
        return assertInstanceOf(BillRead.Invalid.class, read(csv)).reason();
    }
}
