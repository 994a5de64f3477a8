package dev.idem.payments.alipay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.payments.bills.Bill;
import dev.idem.payments.bills.BillRead;
import dev.idem.testing.AlipaySimulator;
import dev.idem.testing.GatewayApi.BillLine;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;

/** Alipay's trade bill zip read as its documentation writes it, and refused when it is not whole. */
class AlipayBillsTest {

    static final LocalDate DAY = LocalDate.of(2026, 12, 1);
    static final Instant AT = Instant.parse("2026-12-01T02:03:04Z");

    static BillRead read(byte[] zip) {
        return new AlipayBills(null, null).read(DAY, zip);
    }

    @Test
    void theBusinessDetailsTradesAndRefundsAreRead() {
        byte[] zip = AlipaySimulator.tradeBill(DAY, List.of(BillLine.payment("o-1", "2026001", 1999, AT),
                new BillLine(true, "o-1", "2026001", 500, AT.plusSeconds(60), "RF1")));
        List<Bill.Line> lines = assertInstanceOf(BillRead.Valid.class, read(zip)).bill().lines();
        assertEquals(new Bill.Line(Bill.Kind.PAYMENT, "o-1", "2026001", 1999, AT, "交易", "", 0), lines.get(0));
        assertEquals(new Bill.Line(Bill.Kind.REFUND, "o-1", "2026001", 500, AT.plusSeconds(60), "退款", "RF1", 500),
                lines.get(1));
    }

    @Test
    void aZipWithoutTheDetailOrWithWrongTotalsIsRefused() throws IOException {
        assertTrue(reason(zip("summary.csv", "#支付宝业务汇总查询\r\n")).contains("business detail"));
        String detail = "支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,订单金额（元）,退款批次号/请求号\r\n"
                + "2026001\t,o-1\t,交易\t,x\t,2026-12-01 10:03:04\t,2026-12-01 10:03:04\t,19.99\t,\t\r\n"
                + "#交易合计：2笔，退款合计：0笔\r\n";
        assertTrue(reason(zip("d_业务明细.csv", detail)).contains("totals count 2 trades"));
        assertTrue(reason(zip("d_业务明细.csv", detail.replace("#交易合计：2笔，退款合计：0笔\r\n", "")))
                .contains("cut short"));
        assertTrue(reason(zip("d_业务明细.csv", detail.replace("19.99", "-19.99").replace("2笔", "1笔")))
                .contains("line 2"));
        assertTrue(reason("not a zip".getBytes()).contains("no business detail") || reason("not a zip".getBytes())
                .contains("zip"));
    }

    static String reason(byte[] zip) {
        return assertInstanceOf(BillRead.Invalid.class, read(zip)).reason();
    }

    static byte[] zip(String name, String gbk) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(out, AlipayBills.GBK)) {
            zip.putNextEntry(new ZipEntry(name));
            zip.write(gbk.getBytes(AlipayBills.GBK));
            zip.closeEntry();
        }
        return out.toByteArray();
    }
}
